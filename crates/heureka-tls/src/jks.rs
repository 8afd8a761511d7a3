//! A reader for Java's JKS key store format.
