"""`lanes lab sweep`: the matrix of runs and how it is run (`matrix`), its command line (`cli`),
on Slurm (`slurm`, `slurm_queue`, `slurm_wait`), and its report (`stats`, `machines`, `plots`,
`report`, `reread`); the thesis's rows the report leaves out (`extra_rows`)."""
