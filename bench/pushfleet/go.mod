module heureka/bench/pushfleet

go 1.22
