"""The scorers trained in a MaUde artifact: MaUde and the baselines of Sinha et al. (2020), section 4, all trained
with the same NCE loss (eq. 2) so that they compare fairly.

- ``maude``: frozen encoder vectors of each utterance, the learned down-projection D_g, a bidirectional
  LSTM over the context's utterances, max-pooling of its states, W into the reply space (eq. 4).
- ``bert-nli``: the same without the dialog RNN: the context's utterance vectors (after D_g) averaged,
  then W (Sinha et al. (2020): "the same as InferSent but with the LSTM encoder replaced with a pre-trained BERT
  encoder"; here the frozen encoder reads each utterance and the average stands for reading the
  concatenated context, which would cost a second encoding pass over every context).
- ``infersent``: a BiLSTM with max-pooling over word2vec vectors (Conneau et al., 2017), one encoder for
  the concatenated context (its last ``max_context_tokens`` words) and for the reply.
- ``ruber``: RUBER's unreferenced scorer (Bi-GRU query and reply, [q; qMr; r], MLP; BERT-RUBER's
  ``word2vec-rnn-ranking`` cell) over the last context turn, with a sigmoid output trained by NCE.

The first three share f_comb = [h_r, c, h_r * c, h_r - c] and the paper's decoder, a two-layer MLP with a
200-unit hidden layer and dropout 0.2 (appendix, "Hyperparameters").
"""

from __future__ import annotations

MAUDE = "maude"
BERT_NLI = "bert-nli"
INFERSENT = "infersent"
RUBER = "ruber"
ALL_VARIANTS = (MAUDE, BERT_NLI, INFERSENT, RUBER)
DEFAULT_VARIANTS = (MAUDE, BERT_NLI)  # the two that train in minutes on cached encoder vectors
ENCODER_VARIANTS = (MAUDE, BERT_NLI)  # read frozen encoder vectors; the others read word2vec tokens

DESCRIPTIONS = {
    MAUDE: "MaUde (Sinha et al., 2020, eq. 4): encoder vectors, D_g, BiLSTM over the context's "
    "utterances, max-pool, W, [h_r, c, h_r*c, h_r-c], MLP, sigmoid; trained by NCE (eq. 2)",
    BERT_NLI: "BERT-NLI baseline (Sinha et al., 2020, section 4): MaUde without the dialog RNN (context utterance "
    "vectors averaged), same NCE training",
    INFERSENT: "InferSent baseline (Sinha et al., 2020, section 4): BiLSTM-max over word2vec vectors of the "
    "concatenated context and of the reply, same NCE training",
    RUBER: "RUBER unreferenced baseline (Sinha et al., 2020, section 4): Bi-GRU query (last context turn) and reply, "
    "[q; qMr; r], MLP, same NCE training",
}


def parse_variants(names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The variants ``names`` in :data:`ALL_VARIANTS` order; a ValueError names an unknown one."""
    unknown = [name for name in names if name not in ALL_VARIANTS]
    if unknown:
        raise ValueError(f"unknown MaUde variant(s) {', '.join(unknown)}; known: {', '.join(ALL_VARIANTS)}")
    if not names:
        raise ValueError("no MaUde variant to train")
    return tuple(name for name in ALL_VARIANTS if name in names)
