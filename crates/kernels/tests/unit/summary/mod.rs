mod histogram;
mod merge;
mod scalar;
