"""Chapter 19: ToMATo and ToMAToMP, multi-parameter topological clustering."""
