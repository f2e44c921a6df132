"""Questions many tests ask of their libraries, each written once."""

# The W-2 in the chat library answers it (12,300 dollars withheld).
W2_QUESTION = "How much federal income tax was withheld on the W-2?"
# The web tests' insurance policy (tests/web/conftest.py) answers it.
INSURANCE_QUESTION = "When does the home insurance renew, and is water damage covered?"
# Asked with a receipt photo attached.
RECEIPT_QUESTION = "What was the total on this receipt?"
