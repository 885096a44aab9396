//! Invented sample upstream documents.
