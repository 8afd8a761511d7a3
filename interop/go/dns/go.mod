module heureka.interop/dns

go 1.22
