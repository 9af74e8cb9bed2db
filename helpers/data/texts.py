"""English texts for notebook 15, written for this tutorial (nothing is downloaded).

``SENTENCES``: short sentences of about twenty tokens, to look at attention patterns in a real
model. ``PASSAGES``: longer passages of several hundred tokens, to stream through a window far
shorter than the text (StreamingLLM). ``FACTS``: prompts whose next word is a well-known fact,
with that word, for the logit lens.
"""

from __future__ import annotations

SENTENCES = (
    "The old lighthouse keeper climbed the stairs every evening to light the lamp before the ships came.",
    "After the rain stopped, the children ran outside to look for frogs in the puddles near the garden.",
    "A good recipe for bread needs only flour, water, salt and yeast, and a little patience while it rises.",
    "When the train finally arrived at the station, most of the passengers had already fallen asleep.",
    "Scientists measured the temperature of the lake every morning for three years to study the seasons.",
    "Our neighbour plays the piano on Sunday afternoons, and the music drifts through the open window.",
)

PASSAGES = (
    "The village sat at the edge of a wide valley, where the river bent twice before it reached the sea. "
    "Every spring the snow on the mountains melted, and the river grew loud and brown for a few weeks. "
    "The farmers knew this and waited before planting the lower fields, because the water sometimes came "
    "over the banks and carried away whatever had been sown too early. In the summer the river was calm "
    "again, and the children of the village learned to swim in the deep pool below the old stone bridge. "
    "The bridge itself was older than anyone could remember. Some said it had been built by monks, others "
    "by soldiers who had once camped in the valley during a long winter. Nobody knew for certain, and the "
    "stones did not say. What everyone agreed on was that the bridge had never fallen, not even in the "
    "great flood that the grandparents still talked about, when the water rose almost to the church door. "
    "After that flood the villagers built a wall along the river, and every year they repaired the parts "
    "that the winter had loosened. It became a custom: on the first dry Saturday of April, everyone who "
    "could carry a stone came down to the wall, and in the evening there was bread, cheese and music in "
    "the square. Visitors who happened to pass through were always invited to stay, and many of them "
    "came back the next year to help again.",
    "Learning to play a musical instrument is a slow process, and most teachers say that the first year "
    "is the hardest. The fingers do not yet know where to go, the sound is thin or harsh, and progress "
    "seems to happen only on paper. Many beginners give up during this time, not because they lack "
    "talent, but because they expect to sound good long before that is possible. A better approach is to "
    "practise a little every day instead of a lot once a week. Short sessions of twenty minutes, repeated "
    "daily, build the habits of the hands far better than a single long afternoon. It also helps to play "
    "simple pieces that one enjoys, rather than exercises alone, and to record oneself from time to time. "
    "Listening back to a recording from three months earlier is often the moment when a student realises "
    "how much has changed. Teachers also recommend playing with other people as early as possible. Even "
    "two beginners playing a simple duet learn to listen, to keep a steady rhythm and to recover from "
    "mistakes without stopping. These are skills that no amount of practice alone can fully teach, and "
    "they make the whole journey much more enjoyable for everyone involved.",
    "A computer program is a list of instructions, but writing one well is more like writing an essay "
    "than filling in a form. The same task can be solved in many different ways, and the choice between "
    "them depends on who will read the code later, how fast it needs to run and how likely it is to "
    "change. Experienced programmers spend a surprising amount of their time reading code rather than "
    "writing it. They look for names that say what a value means, for functions that do one thing, and "
    "for tests that show how the pieces are supposed to behave. When a program fails, the error message "
    "is often the first clue, so good programs explain what went wrong in plain words and say what the "
    "user can do about it. Another habit of careful programmers is to change one thing at a time and to "
    "check the result before moving on. This sounds slow, but it saves hours of searching when something "
    "breaks, because the cause is almost always the last change. Finally, most programs are written by "
    "teams, so the way people agree on style, review each other's work and share what they have learned "
    "matters as much as any single clever idea in the code itself.",
)

FACTS = (
    ("The capital of France is", " Paris"),
    ("The largest planet in our solar system is", " Jupiter"),
    ("Water freezes at a temperature of zero degrees", " Celsius"),
    ("The author of Romeo and Juliet is William", " Shakespeare"),
    ("The chemical symbol for gold is", " Au"),
)
