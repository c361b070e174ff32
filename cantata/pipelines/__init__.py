"""The pipelines that ship with Cantata (coaching, factory, example), each a folder with its
pipeline.yaml. They sit above everything else and use Cantata through its public API;
`cantata.bundled` finds them by name."""
