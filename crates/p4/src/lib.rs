//! v1model pipeline from bmv2 JSON (issue 3). Not written yet.
