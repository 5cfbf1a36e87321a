//! Checkpoints: [`Saver`] (TensorFlow 1.x `tf.train.Saver`), the `checkpoint` state file
//! and [`latest_checkpoint`].

mod checkpoint_state;
#[allow(clippy::module_inception)]
mod saver;

pub use checkpoint_state::{
    checkpoint_exists, format_checkpoint_state, get_checkpoint_state, latest_checkpoint, parse_checkpoint_state,
    update_checkpoint_state, CHECKPOINT_STATE_FILE,
};
pub use saver::{delete_checkpoint_files, Saver, SaverOptions};

#[cfg(test)]
mod tests;
