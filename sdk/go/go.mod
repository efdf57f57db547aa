module hyperspool.dev/go

go 1.22
