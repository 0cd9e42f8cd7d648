"""A small demo study the project writes itself, used when ../shared/data is not beside the checkout.

Project-authored dialogs (no corpus text): twelve contexts, three systems, three raters per reply on
RUBER's 0-2 scale. Rendered in the generic JSONL import format (docs/import-formats.md).
"""

from __future__ import annotations

import json

# (context turns, reference, {system: (reply, [rater1, rater2, rater3])})
_SAMPLE: list[tuple[list[str], str, dict[str, tuple[str, list[int]]]]] = [
    (
        ["Hi , are you coming to the meeting this afternoon ?", "Which meeting ? Nobody told me ."],
        "the budget meeting at three , in room 204 .",
        {
            "human": ("the budget review at three . i sent the invite this morning .", [2, 2, 2]),
            "retrieval": ("i like to swim in the afternoon .", [0, 0, 1]),
            "seq2seq": ("i do n't know .", [1, 0, 1]),
        },
    ),
    (
        [
            "Could you recommend a good place for dinner ?",
            "What kind of food do you like ?",
            "Something spicy .",
        ],
        "then try the sichuan restaurant on main street , their noodles are great .",
        {
            "human": ("the thai place near the station is very spicy and cheap .", [2, 2, 1]),
            "retrieval": ("spicy food is good for you in winter .", [1, 1, 1]),
            "seq2seq": ("i think it is a good idea .", [0, 1, 0]),
        },
    ),
    (
        ["My laptop will not turn on this morning ."],
        "have you tried charging it for a while ?",
        {
            "human": ("did you leave it unplugged overnight ? try the charger first .", [2, 2, 2]),
            "retrieval": ("turn left at the second light .", [0, 0, 0]),
            "seq2seq": ("what is the matter with you ?", [1, 0, 1]),
        },
    ),
    (
        ["I failed my driving test again .", "Oh no , what happened ?", "I forgot to check the mirror ."],
        "that happens to many people . you will pass next time .",
        {
            "human": ("that is a small mistake . you will get it next time .", [2, 2, 2]),
            "retrieval": ("the mirror is in the bathroom .", [0, 1, 0]),
            "seq2seq": ("i am sorry to hear that .", [1, 2, 1]),
        },
    ),
    (
        ["How much is this jacket ?", "It is eighty dollars ."],
        "that is a bit expensive . do you have anything cheaper ?",
        {
            "human": ("hmm , is there a discount if i buy two ?", [2, 2, 1]),
            "retrieval": ("eighty people came to the party .", [0, 0, 0]),
            "seq2seq": ("how much is it ?", [0, 1, 0]),
        },
    ),
    (
        ["Do you want to go hiking this weekend ?"],
        "sure , where do you want to go ?",
        {
            "human": ("i would love to , but it might rain on saturday .", [2, 2, 2]),
            "retrieval": ("yes , let us go to the mountains on sunday .", [2, 1, 2]),
            "seq2seq": ("i do n't know what you are talking about .", [0, 0, 1]),
        },
    ),
    (
        ["The printer is out of paper again .", "I will get some from the supply room ."],
        "thanks , grab a few packs while you are there .",
        {
            "human": ("thank you ! could you also bring some toner ?", [2, 2, 2]),
            "retrieval": ("paper is made from trees .", [0, 0, 0]),
            "seq2seq": ("thank you very much .", [1, 1, 2]),
        },
    ),
    (
        ["What time does the last train leave ?", "At eleven thirty , I think ."],
        "good , then we still have time for dessert .",
        {
            "human": ("great , then we can stay for one more drink .", [2, 2, 2]),
            "retrieval": ("the train was late yesterday .", [1, 0, 1]),
            "seq2seq": ("what time is it ?", [0, 0, 1]),
        },
    ),
    (
        ["I just adopted a puppy !", "That is wonderful ! What breed ?"],
        "a golden retriever . she is three months old .",
        {
            "human": ("a little beagle . he chews everything .", [2, 2, 2]),
            "retrieval": ("i am allergic to cats .", [1, 0, 0]),
            "seq2seq": ("i like dogs .", [1, 1, 1]),
        },
    ),
    (
        ["Can you help me move on Saturday ?"],
        "of course . what time should i come ?",
        {
            "human": ("sure , i can come after lunch . do you need my car ?", [2, 2, 2]),
            "retrieval": ("saturday is my favorite day of the week .", [0, 1, 0]),
            "seq2seq": ("i am not sure .", [1, 0, 1]),
        },
    ),
    (
        ["The soup is too salty .", "Sorry , I will ask the chef to make another one ."],
        "thank you , and could we have some water please ?",
        {
            "human": ("thanks , no hurry .", [2, 1, 2]),
            "retrieval": ("the chef is from france .", [0, 0, 1]),
            "seq2seq": ("thank you .", [1, 1, 1]),
        },
    ),
    (
        ["Have you finished the report ?", "Almost , I need one more hour ."],
        "ok , send it to me before five .",
        {
            "human": ("fine , but the client needs it before five .", [2, 2, 2]),
            "retrieval": ("the weather report says it will snow .", [0, 0, 0]),
            "seq2seq": ("i have finished it .", [0, 1, 0]),
        },
    ),
]
DEMO_SAMPLE_ANNOTATORS = ["sample-rater-1", "sample-rater-2", "sample-rater-3"]


def demo_sample_jsonl() -> bytes:
    """The sample as generic JSONL: one rated reply per line."""
    lines = []
    for index, (turns, reference, replies) in enumerate(_SAMPLE):
        for system, (reply, ratings) in replies.items():
            record = {
                "id": f"sample-{index}-{system}",
                "context": turns,
                "response": reply,
                "system": system,
                "references": [reference],
                "ratings": {"appropriateness": ratings},
                "annotators": DEMO_SAMPLE_ANNOTATORS,
            }
            lines.append(json.dumps(record, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")
