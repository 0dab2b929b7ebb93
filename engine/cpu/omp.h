/* omp.h — OpenMP is optional in the CPU backend: OMP(parallel for ...) becomes
 * the pragma with -fopenmp and vanishes without it, so loops run serially. */
#ifndef STRIX_CPU_OMP_H
#define STRIX_CPU_OMP_H

#ifdef _OPENMP
#include <omp.h>
#define OMP(directive) _Pragma(#directive)
#else
#define OMP(directive)
#endif

#endif
