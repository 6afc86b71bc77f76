"""What ``DataLoader`` runs beside its own code: collation (``collate``), reading a dataset by
the sampler's indices (``fetch``), the loop of each worker process (``worker``) and pinning
batches (``pin_memory``)."""
