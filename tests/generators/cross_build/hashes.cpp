// tests/generators/cross_build/hashes.cpp — prints the hash of a fixed list of specs; check.sh builds it with
// several compilers and flags and requires the same output (a problem's bits depend on its spec only).
#include "generators/generate.hpp"
#include <cstdio>
int main() {
  const char* specs[] = {
    "uniform:m=33,n=17,k=65,lo=-3,hi=2.5,seed=11", "normal:m=64,n=64,k=64,seed=12", "normal:m=20,n=20,k=20,seed=12,source=bf16",
    "ozaki:m=40,n=40,k=40,phi=4,seed=13", "scaled_int:m=30,n=30,k=30,seed=14,source=f16",
    "exp_uniform:m=30,n=30,k=30,emin=-110,emax=110,seed=15", "exp_gauss:m=30,n=30,k=30,std=20,seed=16",
    "exp_sweep:m=20,n=20,k=40,target=e4m3,seed=17", "span:m=16,n=16,k=128,s=40,block=32,shift=2,seed=18",
    "outlier:m=32,n=32,k=32,p=0.1,e=12,seed=19", "edges:m=30,n=30,k=30,target=e5m2,seed=20",
    "cancel:n=1000,kappa=1e16,seed=21", "cancel:n=30,kappa=1e30,seed=21,source=bf16", "cancel:n=100,kappa=1,seed=21,source=f64",
    "cancel_gemm:m=16,n=24,k=400,kappa=1e16,seed=22", "cancel_gemm:m=24,n=16,k=400,kappa=1e12,seed=22,source=bf16",
    "spectral:m=100,n=30,k=80,mode=3,cond=1e8,seed=23", "spectral:m=60,n=50,k=70,mode=5,cond=1e6,b=spectral,seed=23,source=f64",
    "probe:m=8,n=8,k=512,kind=descending,seed=24", "sum_cancel:vectors=8,n=300,kappa=1e12,seed=25",
    "sum_range:vectors=6,n=500,mode=subnormal_tail,seed=26,source=f16", "nrm2_trap:vectors=4,n=200,trap=mixed,seed=27,source=bf16"};
  for (const char* s : specs) std::printf("%016llx %s\n", (unsigned long long)fpcert::problem_hash(fpcert::generate(s)), s);
}
