"""bmv2's Thrift API on the switch's command port: the connection loop and its handlers (`server`),
what a handler knows of the running switch (`context`) and the loaded program (`program`), and one
module per service or family of calls (`standard`: tables, externs and profiles; `sswitch`,
`pre`)."""
