"""LAS / UAS against a direct implementation of the CoNLL 2018 definition.

No PyPI package ships ``conll18_ud_eval``, so the reference is written here: with
gold tokenisation every word is aligned, and the CoNLL 2018 script's LAS F1
(= precision = recall) is the share of words whose HEAD matches and whose
DEPREL matches after dropping language-specific subtypes (``split(":")[0]``).
"""

from __future__ import annotations

import conllu
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glotbench.errors import InputError
from glotbench.metrics import get_metric

ATOL = 1e-9
DEPRELS = ["nsubj", "nsubj:pass", "obj", "nmod", "nmod:poss", "root", "punct", "acl:relcl", "acl"]


def conll18_reference(labelled):
    def reference(predictions, references):
        correct = words = 0
        for system_sentence, gold_sentence in zip(predictions, references, strict=True):
            for (s_head, s_rel), (g_head, g_rel) in zip(
                system_sentence, gold_sentence, strict=True
            ):
                words += 1
                if s_head != g_head:
                    continue
                if labelled and s_rel.split(":")[0] != g_rel.split(":")[0]:
                    continue
                correct += 1
        return correct / words if words else 0.0

    return reference


@st.composite
def treebanks(draw):
    n = draw(st.integers(1, 8))
    preds, refs = [], []
    for _ in range(n):
        length = draw(st.integers(0, 8))
        arcs = st.tuples(st.integers(0, length), st.sampled_from(DEPRELS))
        refs.append(draw(st.lists(arcs, min_size=length, max_size=length)))
        preds.append(draw(st.lists(arcs, min_size=length, max_size=length)))
    return preds, refs


@pytest.mark.slow
@pytest.mark.parametrize("name", ["las", "uas"])
@settings(max_examples=80, deadline=None)
@given(data=treebanks(), seed=st.integers(0, 2**16))
def test_equals_conll18_definition(name, data, seed, check_resampled):
    preds, refs = data
    reference = conll18_reference(labelled=name == "las")
    check_resampled(get_metric(name), preds, refs, reference, seed=seed, atol=ATOL)


GOLD = """# text = Vámonos al mar.
1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_
1\tVamos\tir\tVERB\t_\t_\t0\troot\t_\t_
2\tnos\tnosotros\tPRON\t_\t_\t1\tobj\t_\t_
3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_
3\ta\ta\tADP\t_\t_\t5\tcase\t_\t_
4\tel\tel\tDET\t_\t_\t5\tdet\t_\t_
5\tmar\tmar\tNOUN\t_\t_\t1\tobl:arg\t_\t_
6\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""


def test_conllu_token_lists():
    gold = conllu.parse(GOLD)[0]
    system = conllu.parse(
        GOLD.replace("1\tobl:arg", "1\tobl:tmod").replace("5\tdet", "1\tdet").replace("obj", "iobj")
    )[0]
    # 6 words (the two multi-word token lines are skipped): heads wrong on 1, labels on 1 more
    assert get_metric("uas").stats([system], [gold]).tolist() == [[5.0, 6.0]]
    assert get_metric("las").stats([system], [gold]).tolist() == [[4.0, 6.0]]


def test_universal_relation_only():
    las = get_metric("las")
    assert las.corpus_score([[(0, "root"), (1, "nmod:poss")]], [[(0, "root"), (1, "nmod")]]) == 1.0
    assert las.corpus_score([[(0, "root"), (1, "obj")]], [[(0, "root"), (1, "nmod")]]) == 0.5
    assert (
        get_metric("uas").corpus_score([[(0, "root"), (1, "obj")]], [[(0, "root"), (1, "nmod")]])
        == 1.0
    )
    # heads given as digit strings (as read from a CoNLL-U column) are accepted
    assert las.corpus_score([[("0", "root")]], [[(0, "root")]]) == 1.0


def test_edge_cases():
    for name in ("las", "uas"):
        metric = get_metric(name)
        assert metric.corpus_score([[]], [[]]) == 0.0
        assert metric.corpus_score([[(2, "obj"), (0, "root")]], [[(0, "root"), (1, "obj")]]) == 0.0


def test_length_mismatch_raises():
    with pytest.raises(InputError, match="gold tokenisation"):
        get_metric("las").stats([[(0, "root")]], [[(0, "root"), (1, "obj")]])


def test_malformed_input_raises():
    las = get_metric("las")
    with pytest.raises(InputError, match="pair"):
        las.stats([[(0, "root", "x")]], [[(0, "root")]])
    with pytest.raises(InputError, match="non-negative integer"):
        las.stats([[("x", "root")]], [[(0, "root")]])
    with pytest.raises(InputError, match="non-negative integer"):
        las.stats([[(-1, "root")]], [[(0, "root")]])
    with pytest.raises(InputError, match="pairs, got a string"):
        las.stats(["0 root"], [[(0, "root")]])
