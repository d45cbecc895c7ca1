//! The cuda-sys-gen pipeline, as a library: NVIDIA's typedef headers in, a Rust crate out.
//!
//! [`pipeline::generate`] is the whole job in one screen: locate or fetch headers
//! ([`fetch`], [`toolkits`]), read each toolkit ([`read`]: bindgen, its output, the headers'
//! own alias macros), merge every toolkit into the [`model`], render the crate ([`emit`]),
//! write it ([`mod@write`]) and say what happened ([`report`]).

pub mod add_toolkit;
pub mod answer_rule;
pub mod archive;
pub mod crate_name;
pub mod diff;
pub mod emit;
pub mod error;
pub mod fault;
pub mod fetch;
pub mod input;
pub mod layout;
pub mod locate;
pub mod manifest;
pub mod model;
pub mod names;
pub mod output_folder;
pub mod pipeline;
pub mod platform;
pub mod prereq;
pub mod read;
pub mod record_format;
pub mod registry_json;
pub mod report;
pub mod reserved;
pub mod scratch;
pub mod standins;
pub mod syntax;
pub mod toolkits;
pub mod version;
pub mod write;

pub use error::Error;
pub use version::ToolkitVersion;
