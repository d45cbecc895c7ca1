//! Ctrl-C held off while a change that must be whole is made. A leaf: it imports nothing of
//! the pipeline.

/// Blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT on this thread while it lives (the pipeline's
/// worker threads are gone by then): a Ctrl-C during `--add-toolkit`'s commit takes effect
/// after it, so it leaves the manifest and the crate both old or both new. SIGKILL cannot be
/// held off: the journal covers it.
pub struct HoldSignals {
    #[cfg(unix)]
    old: libc::sigset_t,
}

impl HoldSignals {
    pub fn now() -> HoldSignals {
        #[cfg(unix)]
        {
            // SAFETY: sigset_t is plain data, initialised by sigemptyset before use; the
            // calls change this thread's mask only.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                let mut old: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                    libc::sigaddset(&mut set, sig);
                }
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
                HoldSignals { old }
            }
        }
        #[cfg(not(unix))]
        HoldSignals {}
    }
}

impl Drop for HoldSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `now`; a signal held meanwhile is delivered now.
        #[cfg(unix)]
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}
