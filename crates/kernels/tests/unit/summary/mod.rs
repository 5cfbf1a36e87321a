mod histogram;
mod merge;
mod scalar;
mod writer;
