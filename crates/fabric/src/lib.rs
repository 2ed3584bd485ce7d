//! InfiniBand fabric model and routing engines (issue 6). Not written yet.
