//! What a `KlaxonServer` becomes in the cluster.

pub mod objects;
