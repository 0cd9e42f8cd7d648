"""RUBER (Tao et al., 2018, section 3): referenced s_R, unreferenced s_U, and their blends.

- :mod:`.corpus`: query-reply pairs from DailyDialog text or a pairs JSONL file (the training corpus).
- :mod:`.word2vec`: the word embeddings (section 4.1: 50-dimensional word2vec), trained with gensim.
- :mod:`.scores`: s_R (section 3.1, eqs. 1-2; several references: Gupta et al. (2019), eq. 1) and the
  "vector pool" unreferenced baseline (the same cosine between query and reply).
- :mod:`.unreferenced_model`: the neural s_U (section 3.2, Figure 3, eq. 3), in torch.
- :mod:`.training`: ``train_ruber`` (word2vec, then s_U by negative sampling, early stopping).
- :mod:`.artifact`: the saved model folder, its content hash, and ``load_ruber`` (cached).
- :mod:`.blends`: min-max normalisation (eq. 4) and the min/max/geometric/arithmetic blends (section 3.3).
- :mod:`.ranking`: ranking accuracy of an unreferenced scorer (true reply vs a random one).

Importing this package imports neither torch nor gensim; only training and loading a model do.
"""
