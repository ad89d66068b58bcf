# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The five tokens Robometer adds to the base tokenizer, in the order that fixes their ids."""
from typing import Dict

# reward-models.md 1.3: added one per add_special_tokens call, in this order, after the base
# Qwen3-VL vocabulary of 151669 -> ids 151669..151673 with the real tokenizer.
ROBOMETER_SPECIAL_TOKENS = ("<|split_token|>", "<|reward_token|>", "<|pref_token|>", "<|sim_token|>",
                            "<|prog_token|>")
SPLIT_TOKEN, REWARD_TOKEN, PREF_TOKEN, SIM_TOKEN, PROG_TOKEN = ROBOMETER_SPECIAL_TOKENS


def add_robometer_tokens(tokenizer) -> Dict[str, int]:
    """Add the tokens one call each (as upstream) and return their ids, resolved by name."""
    for token in ROBOMETER_SPECIAL_TOKENS:
        if tokenizer.convert_tokens_to_ids(token) in (None, tokenizer.unk_token_id):
            tokenizer.add_special_tokens({"additional_special_tokens": [token]})
    return {token: int(tokenizer.convert_tokens_to_ids(token)) for token in ROBOMETER_SPECIAL_TOKENS}
