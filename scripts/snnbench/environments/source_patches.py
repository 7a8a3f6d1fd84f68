"""Edits to third-party trees before they are built (snnbench.environments.sources.Source.patches): each a
(file, text, replacement), the text found once in the tree it was written for."""

# GeNN 4.9's CUDA backend calls cuCtxCreate with CUDA 12's three arguments; CUDA 13 takes four (a
# params pointer second). The guard is GeNN 5.4's own (src/genn/backends/cuda/optimiser.cc), so the
# tree builds with either toolkit; a CPU-only build does not compile the file.
CU_CTX_CREATE = "    CHECK_CU_ERRORS(cuCtxCreate(&cuContext, 0, cuDevice));\n"
GENN_4_CUDA_13 = (
    "src/genn/backends/cuda/optimiser.cc",
    CU_CTX_CREATE,
    "#if CUDA_VERSION < 13000\n"
    + CU_CTX_CREATE
    + "#else\n    CHECK_CU_ERRORS(cuCtxCreate(&cuContext, NULL, 0, cuDevice));\n#endif\n",
)

# The multi-area model's simulation (multiarea_model/simulation.py) on NEST 3.10 and numpy 2: its memory
# probe calls nest.sli_func (gone in NEST 3.10; the probe only logs, so it returns 0), and np.Inf and
# np.NINF are gone in numpy 2.
MAM_SIMULATION = "multiarea_model/simulation.py"
MAM_NEST_3_10_NUMPY_2 = (
    (
        MAM_SIMULATION,
        """        try:
            mem = nest.ll_api.sli_func('memory_thisjob')
        except AttributeError:
            mem = nest.sli_func('memory_thisjob')
        if isinstance(mem, dict):
            return mem['heap']
        else:
            return mem
""",
        "        return 0  # snnbench: NEST 3.10 has no memory_thisjob to call\n",
    ),
    (
        MAM_SIMULATION,
        "                        w_max = np.Inf\n                        mean_delay = network",
        "                        w_max = np.inf\n                        mean_delay = network",
    ),
    (MAM_SIMULATION, "                        w_min = np.NINF\n", "                        w_min = -np.inf\n"),
    (
        MAM_SIMULATION,
        "                    w_max = np.Inf\n                    v = network",
        "                    w_max = np.inf\n                    v = network",
    ),
    (MAM_SIMULATION, "                            max=np.Inf)\n", "                            max=np.inf)\n"),
)
