/* kernels/gpu_compat.h — one source, two toolchains: the kernels are written in HIP C++
 * with hip* runtime names; under nvcc (-x cu) this header maps them to their cuda*
 * twins, and it hides the per-vendor intrinsics behind hzk_* helpers.
 *
 *   hipcc (ROCm, clang -x hip)  defines __HIPCC__ / __HIP__      -> <hip/hip_runtime.h>
 *   nvcc  (-x cu)               defines __CUDACC__ (not __HIP__) -> <cuda_runtime.h>
 *
 * Intrinsics:
 *   hzk_dp4a(a, b, c)   c + Σ_{i<4} a.i8[i]·b.i8[i] (signed bytes, int32 accumulate):
 *                        NVIDIA __dp4a (sm_61+); AMD v_dot4_i32_i8 (__builtin_amdgcn_sdot4)
 *                        on gfx906/908/90a/94x and RDNA2 (gfx103x), v_dot4_i32_iu8
 *                        (__builtin_amdgcn_sudot4, both operands signed) on RDNA3/3.5
 *                        (gfx11xx); a portable byte loop elsewhere.
 *   hzk_ld_stream(p)     16-byte load of data read exactly once (weights): bypasses /
 *                        evicts first from L1 so that the activations stay cached.
 *   hzk_ld_cached(p)     read-only cached load (activations, reused by every row).
 *   hzk_warp_sum(v)      float sum over the hardware warp (32 lanes on NVIDIA and RDNA
 *                        in wave32, 64 on CDNA); every lane gets the total.
 * HZK_WARP is the warp width used by the kernels' reductions (warpSize at run time).
 */
#pragma once

#if defined(__CUDACC__) && !defined(__HIP__)
/* ---------------------------------------------------------------- nvcc / CUDA */
#define HZK_CUDA 1
#include <cuda_runtime.h>
#include <cuda_fp16.h>

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
typedef cudaDeviceProp hipDeviceProp_t;
#define hipSuccess                       cudaSuccess
#define hipErrorNotReady                 cudaErrorNotReady
#define hipErrorInvalidValue             cudaErrorInvalidValue
#define hipGetErrorString                cudaGetErrorString
#define hipGetLastError                  cudaGetLastError
#define hipGetDeviceCount                cudaGetDeviceCount
#define hipGetDeviceProperties           cudaGetDeviceProperties
#define hipSetDevice                     cudaSetDevice
#define hipDeviceSynchronize             cudaDeviceSynchronize
#define hipMalloc                        cudaMalloc
#define hipFree                          cudaFree
#define hipMemcpy                        cudaMemcpy
#define hipMemcpyAsync                   cudaMemcpyAsync
#define hipMemsetAsync                   cudaMemsetAsync
#define hipMemcpyHostToDevice            cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost            cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice          cudaMemcpyDeviceToDevice
#define hipStreamCreateWithFlags         cudaStreamCreateWithFlags
#define hipStreamNonBlocking             cudaStreamNonBlocking
#define hipStreamDestroy                 cudaStreamDestroy
#define hipStreamSynchronize             cudaStreamSynchronize
#define hipStreamBeginCapture            cudaStreamBeginCapture
#define hipStreamEndCapture              cudaStreamEndCapture
#define hipStreamCaptureModeThreadLocal  cudaStreamCaptureModeThreadLocal
#define hipGraphInstantiate(e, g, a, b, c) cudaGraphInstantiate (e, g, 0)
#define hipGraphLaunch                   cudaGraphLaunch
#define hipGraphExecDestroy              cudaGraphExecDestroy
#define hipGraphDestroy                  cudaGraphDestroy
#define hipEventCreate                   cudaEventCreate
#define hipEventDestroy                  cudaEventDestroy
#define hipEventRecord                   cudaEventRecord
#define hipEventSynchronize              cudaEventSynchronize
#define hipEventElapsedTime              cudaEventElapsedTime
#define hipMemGetInfo                    cudaMemGetInfo
#define hipDriverGetVersion              cudaDriverGetVersion
#define hipRuntimeGetVersion             cudaRuntimeGetVersion
#define hipGetDevice                     cudaGetDevice
#define hipDeviceGetAttribute            cudaDeviceGetAttribute
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeMaxSharedMemoryPerMultiprocessor cudaDevAttrMaxSharedMemoryPerMultiprocessor

#else
/* ---------------------------------------------------------------- hipcc / ROCm */
#define HZK_HIP 1
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#endif

#include <stdint.h>

#ifdef __CUDACC__
#define HZK_RESTRICT __restrict__
#else
#define HZK_RESTRICT __restrict__
#endif

/* ---------------------------------------------------------------- device helpers */
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define HZK_DEVICE_PASS 1
#endif

#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) \
  || defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1152__) || defined(__gfx1200__) \
  || defined(__gfx1201__)
#define HZK_AMD_SUDOT4 1
#elif defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) \
  || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx1030__) || defined(__gfx1031__) \
  || defined(__gfx1032__) || defined(__gfx1033__) || defined(__gfx1034__) || defined(__gfx1035__) \
  || defined(__gfx1036__)
#define HZK_AMD_SDOT4 1
#endif

/** c + dot of the four signed bytes of a and b. */
static __device__ __forceinline__ int
hzk_dp4a (int a, int b, int c)
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
  return __dp4a (a, b, c);
#elif defined(HZK_AMD_SUDOT4)
  return __builtin_amdgcn_sudot4 (true, a, true, b, c, false);
#elif defined(HZK_AMD_SDOT4)
  return __builtin_amdgcn_sdot4 (a, b, c, false);
#else
  const int8_t *x = (const int8_t *) &a, *y = (const int8_t *) &b;
  return c + x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
#endif
}

/** 16-byte streaming load (data used once). p must be 16-byte aligned. */
static __device__ __forceinline__ uint4
hzk_ld_stream (const uint4 *p)
{
#if defined(HZK_CUDA)
  return __ldcs (p);
#else
  uint4 v;
  v.x = __builtin_nontemporal_load (&((const unsigned int *) p)[0]);
  v.y = __builtin_nontemporal_load (&((const unsigned int *) p)[1]);
  v.z = __builtin_nontemporal_load (&((const unsigned int *) p)[2]);
  v.w = __builtin_nontemporal_load (&((const unsigned int *) p)[3]);
  return v;
#endif
}

/** Prefetch the cache line of p into L1 (CUDA prefetch.global.L1; clang's
 *  __builtin_prefetch on AMD, a no-op where the ISA has none). Used for the small
 *  scale/meta bytes, so that their DRAM round trip overlaps the weight loads instead of
 *  following them. */
static __device__ __forceinline__ void
hzk_prefetch (const void *p)
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__)
  asm volatile ("prefetch.global.L1 [%0];" ::"l"(p));
#else
  __builtin_prefetch (p);
#endif
}

/** Read-only cached load (activations). */
template <typename T>
static __device__ __forceinline__ T
hzk_ld_cached (const T *p)
{
#if defined(HZK_CUDA)
  return __ldg (p);
#else
  return *p;
#endif
}

/** A float written by one block and read by another block of the same launch (after a
 *  __threadfence and an atomic handshake): stored to and loaded from L2, past the
 *  non-coherent L1 (CUDA st.global.cg / ld.global.cg; volatile, i.e. glc, on AMD). */
static __device__ __forceinline__ void
hzk_st_l2 (float *p, float v)
{
#if defined(HZK_CUDA)
  __stcg (p, v);
#else
  *(volatile float *) p = v;
#endif
}

static __device__ __forceinline__ float
hzk_ld_l2 (const float *p)
{
#if defined(HZK_CUDA)
  return __ldcg (p);
#else
  return *(const volatile float *) p;
#endif
}

/** 16-byte asynchronous copy global -> shared (sm_80+): cp.async.cg (L2 only), or with
 *  via_l1 cp.async.ca (through L1: data that other blocks of the SM read too, e.g. the
 *  activations of a product); valid == false writes 16 zero bytes (src-size 0: src is not
 *  read). Elsewhere a plain copy (the kernels that use it run on sm_80+ only). */
static __device__ __forceinline__ void
hzk_cp_async16 (void *dst, const void *src, bool valid, bool via_l1 = false)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t d = (uint32_t) __cvta_generic_to_shared (dst);
  if (via_l1)
    asm volatile ("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src),
                  "r"(valid ? 16 : 0));
  else
    asm volatile ("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src),
                  "r"(valid ? 16 : 0));
#else
  *(uint4 *) dst = valid ? *(const uint4 *) src : make_uint4 (0, 0, 0, 0);
#endif
}

/** 8-byte asynchronous copy global -> shared (cp.async.ca, sm_80+; a plain copy
 *  elsewhere); valid == false writes 8 zero bytes. */
static __device__ __forceinline__ void
hzk_cp_async8 (void *dst, const void *src, bool valid)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t d = (uint32_t) __cvta_generic_to_shared (dst);
  asm volatile ("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(d), "l"(src),
                "r"(valid ? 8 : 0));
#else
  *(uint2 *) dst = valid ? *(const uint2 *) src : make_uint2 (0, 0);
#endif
}

/** 16-byte asynchronous copy global -> shared of which the first n bytes (0..16) come from
 *  src and the rest are zero (cp.async.cg with src-size n, sm_80+; a byte copy elsewhere).
 *  src and dst 16-byte aligned; bytes of src past n are not read. */
static __device__ __forceinline__ void
hzk_cp_async16n (void *dst, const void *src, int n)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t d = (uint32_t) __cvta_generic_to_shared (dst);
  asm volatile ("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(n));
#else
  for (int i = 0; i < 16; i++)
    ((uint8_t *) dst)[i] = i < n ? ((const uint8_t *) src)[i] : 0;
#endif
}

/** Closes this thread's group of cp.async copies issued since the last commit (an empty
 *  group if none: groups are counted, so commit once per pipeline step). */
static __device__ __forceinline__ void
hzk_cp_async_commit (void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile ("cp.async.commit_group;" ::: "memory");
#endif
}

/** Waits until at most N of this thread's committed cp.async groups are still in flight
 *  (the older ones have landed; a __syncthreads must follow before other threads read
 *  them). */
template <int N>
static __device__ __forceinline__ void
hzk_cp_async_wait (void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile ("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

/** Waits for all of this thread's cp.async copies (a __syncthreads must follow before
 *  other threads read them). */
static __device__ __forceinline__ void
hzk_cp_async_wait_all (void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile ("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
#endif
}

/** Sum over the warp (butterfly; all lanes get the result). */
static __device__ __forceinline__ float
hzk_warp_sum (float v)
{
#if defined(HZK_CUDA)
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync (0xffffffffu, v, o, 32);
#else
  for (int o = warpSize / 2; o > 0; o >>= 1)
    v += __shfl_xor (v, o, warpSize);
#endif
  return v;
}

/** Butterfly shuffle within aligned segments of `width` lanes (width a power of two
 *  <= 32, so the same code is right on wave32, wave64 and CUDA warps). */
template <typename T>
static __device__ __forceinline__ T
hzk_shfl_xor (T v, int lane_mask, int width)
{
#if defined(HZK_CUDA)
  return __shfl_xor_sync (0xffffffffu, v, lane_mask, width);
#else
  return __shfl_xor (v, lane_mask, width);
#endif
}

/** Lane `src` of the caller's aligned segment of `width` lanes (width a power of two
 *  <= 32; all lanes of the segment must call it). */
template <typename T>
static __device__ __forceinline__ T
hzk_shfl_idx (T v, int src, int width)
{
#if defined(HZK_CUDA)
  return __shfl_sync (0xffffffffu, v, src, width);
#else
  return __shfl (v, src, width);
#endif
}

/** Sum over aligned segments of `width` lanes; every lane gets its segment's total. */
static __device__ __forceinline__ float
hzk_segment_sum (float v, int width)
{
  for (int o = width / 2; o > 0; o >>= 1)
    v += hzk_shfl_xor (v, o, width);
  return v;
}

/** Warp width for launch geometry (host side: the widest, 64, is safe for shared-memory
 *  sizing; device side: the real width). */
#define HZK_MAX_WARP 64

/** IEEE half bits -> float (exact). */
static __device__ __forceinline__ float
hzk_half_bits_to_float (uint16_t h)
{
  __half_raw r;
  r.x = h;
  return __half2float (__half (r));
}

/** float -> IEEE half bits, rounded to nearest even (as the CPU's hz_fp32_to_fp16). */
static __device__ __forceinline__ uint16_t
hzk_float_to_half_bits (float f)
{
  const __half_raw r = (__half_raw) __float2half_rn (f);
  return r.x;
}

/** bfloat16 bits -> float (exact). */
static __device__ __forceinline__ float
hzk_bf16_bits_to_float (uint16_t h)
{
  return __uint_as_float ((uint32_t) h << 16);
}

/* ---------------------------------------------------------------- dependent launches */
/* Programmatic dependent launch (NVIDIA sm_90+, issue 21): a kernel launched by
 * hzk_launch_dep while hzk_dep_enabled is set may start while the kernel before it on the
 * stream still runs, as soon as every block of that one has called hzk_dep_release (or
 * exited). Its blocks then do what needs no input of the previous kernels (address
 * arithmetic, prefetching weights into L2) and call hzk_dep_wait before they read or write
 * any activation: that waits for the whole previous grid and its memory. Every kernel so
 * launched calls hzk_dep_wait before its first activation access, so the chain stays
 * ordered transitively. Elsewhere (AMD, older NVIDIA, hzk_dep_enabled 0) hzk_launch_dep is
 * a plain launch and both device calls are no-ops: the portable twin. */
static __device__ __forceinline__ void
hzk_dep_wait (void)
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("griddepcontrol.wait;" ::: "memory");
#endif
}

static __device__ __forceinline__ void
hzk_dep_release (void)
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/** Both, at the top of a kernel with nothing to do before its inputs are complete. */
static __device__ __forceinline__ void
hzk_dep_begin (void)
{
  hzk_dep_wait ();
  hzk_dep_release ();
}

/** Prefetch the cache line of p into L2 (weights a kernel will read after hzk_dep_wait). */
static __device__ __forceinline__ void
hzk_prefetch_l2 (const void *p)
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__)
  asm volatile ("prefetch.global.L2 [%0];" ::"l"(p));
#else
  __builtin_prefetch (p);
#endif
}

/** Whether hzk_launch_dep asks for dependent launches (set by hzk_dep_launch_set; host), and
 *  whether the decode matvec then prefetches its weight rows into L2 before waiting. */
extern int hzk_dep_enabled, hzk_weight_prefetch;

#include <utility>

/** Launch kernel k<<<grid, block, smem, stream>>>(args...), as a programmatic dependent
 *  launch where hzk_dep_enabled (CUDA: cudaLaunchKernelEx with
 *  cudaLaunchAttributeProgrammaticStreamSerialization; capturable into graphs). k must call
 *  hzk_dep_wait before touching activations. Returns the launch's error. */
template <typename... KA, typename... A>
static inline hipError_t
hzk_launch_dep (void (*k) (KA...), dim3 grid, dim3 block, size_t smem, hipStream_t stream,
                A &&...args)
{
#if defined(HZK_CUDA)
  if (hzk_dep_enabled)
    {
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      at[0].val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = grid;
      cfg.blockDim = block;
      cfg.dynamicSmemBytes = smem;
      cfg.stream = stream;
      cfg.attrs = at;
      cfg.numAttrs = 1;
      return cudaLaunchKernelEx (&cfg, k, std::forward<A> (args)...);
    }
#endif
  k<<<grid, block, smem, stream>>> (std::forward<A> (args)...);
  return hipGetLastError ();
}
