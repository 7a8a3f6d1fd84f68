"""NEST (PyNEST): the builders of the network models on NEST, threads and MPI ranks."""
