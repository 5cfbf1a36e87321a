mod lock;
mod par;
mod sparse;
mod training;
mod update;
mod variables;
