"""ParlAI tasks that say how conversations start (``-t parlai_acute.tasks.<name>``).

Each module is at once the teacher (``DefaultTeacher``, for ``display_data``/``eval_model``)
and the worlds (``SelfChatWorld`` for ``self_chat``, ``InteractiveWorld`` for
``interactive``), because ParlAI imports the module named by ``-t`` for both:

* ``chitchat``: openings of real human-human conversations (chitchat-dataset);
* ``persona``: a persona per speaker (our own profiles, ``data/personas.json``);
* ``topics``: one topic for both speakers (``data/topics.json``);
* ``static_contexts``: 1-3 turn contexts with the real next turn (Meena's MTB shape).

``base`` holds the teacher and worlds of tasks that differ only in their seed function
(``persona``, ``topics``).
"""
