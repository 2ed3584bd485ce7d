"""The lab: the thesis's test cases on Mininet, measurements, plots and reports."""
