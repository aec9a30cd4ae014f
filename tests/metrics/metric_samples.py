"""Small test data written for these tests (never third-party data)."""

# (reply, references): ordinary, empty, punctuation only, non-ASCII, 1 to 4 references
PAIRS = [
    ("I'm fine, thanks. And you?", ["I am fine thank you", "Pretty good! You?", "Not bad at all, and you?"]),
    ("", ["Hello there!"]),
    ("?!...", ["What? Really?", "no way"]),
    ("Café au lait, s'il vous plaît ☕ 你好", ["Un café, s'il vous plaît", "你好，我要一杯咖啡", "A coffee please"]),
    ("the cat sat on the mat", ["the cat is on the mat", "there is a cat on the mat", "a cat on a mat", "cats!"]),
    ("I love reading books about the history of science", ["I like to read history books"]),
]

DIALOGUES = [
    {"dialogue": [
        {"text": "Hi, how are you doing today?", "responses": ["I'm fine, thanks. And you?", "Pretty good! You?"]},
        {"text": "I'm great, thanks. Did you see the game last night?", "responses": ["No, who won?"]},
        {"text": "No, I missed it. Who won?"}]},
    [{"text": "Where should we eat tonight?", "responses": ["How about the Italian place?", "Let's cook at home.",
                                                           "I don't mind."]},
     {"text": "What about sushi?"}],
]
