"""PyGeNN 5 (GeNN's Python interface): the builders of the network models on GeNN, `genn` on the CUDA backend and
`genn-cpu` on the single-threaded CPU backend (pd14: the backend and its helpers; multi_area), and the
checks of the experiments' `genn` options (options: light, read by planning).
"""
