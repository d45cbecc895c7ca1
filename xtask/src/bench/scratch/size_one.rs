//! Binary size: loads the driver and resolves one entry, printing the outcome.
use cuda_driver_pfn::{entries, Driver};

fn main() {
    match Driver::load().and_then(|d| d.get::<entries::cuMemAlloc_v3020>().map(|f| f as usize)) {
        Ok(p) => println!("cuMemAlloc_v3020 at {p:#x}"),
        Err(e) => println!("{e}"),
    }
}
