"""tests/conclusions: every experimental conclusion a notebook states ("X beats Y", "X cannot",
"X explains Y", "X grows with Y") re-checked where it could break: at least three seeds, the
variations the notebook itself suggests (more steps, other sizes) and, for an explanation, the
control that would refute it. The prose of the notebook claims exactly the scope that holds here.

Every test in this folder carries the ``conclusions`` marker (the root conftest.py adds it). They
train many small models, so they are left out of a plain `python3 tasks.py test`; run them with
`python3 tasks.py test --conclusions` (everything) or `python3 tasks.py test -m conclusions`
(only them). CI runs them. One file per notebook: test_nbNN_topic.py.
"""
