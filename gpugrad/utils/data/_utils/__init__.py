"""What ``DataLoader`` runs beside its own code: collation (``collate``)."""
