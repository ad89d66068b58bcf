"""What a person looks at: replay plots, Foxglove layouts and stills of them (matplotlib)."""
