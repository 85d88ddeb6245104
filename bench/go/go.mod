module gosched.io/bench

go 1.19
