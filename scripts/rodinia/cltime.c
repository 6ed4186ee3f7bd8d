/*
 * cltime: an LD_PRELOAD interposer that times a program's OpenCL commands
 * from the device's profiling events, the way `funmem bench` times its own
 * kernels, so that a reference program built from someone else's sources
 * can be timed without changing them.
 *
 * It turns on CL_QUEUE_PROFILING_ENABLE in every command queue created,
 * attaches an event to each kernel launch and buffer transfer (read, write,
 * copy) whose caller passed none (and keeps a reference to the caller's
 * event otherwise), and sums END - START per kind. The events are waited
 * for and released in batches, and at clReleaseCommandQueue,
 * clReleaseContext and exit; after each batch the totals are written, as
 * one JSON object, to the file named by CLTIME_OUT:
 *
 *   {"kernel_ns": N, "launches": N, "transfer_ns": N, "transfers": N,
 *    "transfer_bytes": N, "unprofiled": N,
 *    "kernels": {"name": {"launches": N, "ns": N}, ...}}
 *
 * "unprofiled" counts events whose times the driver did not give.
 *
 * Build: gcc -shared -fPIC -O2 -o cltime.so cltime.c -ldl
 * (with -I for the directory holding CL/cl.h).
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { KERNEL, TRANSFER };

struct pending {
    cl_event event;
    enum kind kind;
    int name; /* index into names[], kernels only; -1 otherwise */
};

#define MAX_PENDING 1024
#define MAX_NAMES 64

static struct pending pending[MAX_PENDING];
static int n_pending;
static char names[MAX_NAMES][64];
static unsigned long long name_launches[MAX_NAMES], name_ns[MAX_NAMES];
static int n_names;
static unsigned long long kernel_ns, launches, transfer_ns, transfers, transfer_bytes, unprofiled;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int exit_registered;

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "cltime: %s not found in the OpenCL library\n", name);
        exit(70);
    }
    return f;
}

#define REAL(ret, name, params) \
    static ret(CL_API_CALL * real_##name) params; \
    if (!real_##name) real_##name = (ret(CL_API_CALL *) params)real(#name)

static void write_totals(void) {
    const char *path = getenv("CLTIME_OUT");
    if (!path || !*path) return;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cltime: cannot write %s\n", path);
        return;
    }
    fprintf(f,
            "{\"kernel_ns\": %llu, \"launches\": %llu, \"transfer_ns\": %llu, "
            "\"transfers\": %llu, \"transfer_bytes\": %llu, \"unprofiled\": %llu, \"kernels\": {",
            kernel_ns, launches, transfer_ns, transfers, transfer_bytes, unprofiled);
    for (int i = 0; i < n_names; i++)
        fprintf(f, "%s\"%s\": {\"launches\": %llu, \"ns\": %llu}", i ? ", " : "", names[i],
                name_launches[i], name_ns[i]);
    fprintf(f, "}}\n");
    fclose(f);
}

/* Waits for every pending event, adds its time to the totals and releases
   it; then writes the totals. Called with the lock held. */
static void harvest(void) {
    REAL(cl_int, clWaitForEvents, (cl_uint, const cl_event *));
    REAL(cl_int, clGetEventProfilingInfo, (cl_event, cl_profiling_info, size_t, void *, size_t *));
    REAL(cl_int, clReleaseEvent, (cl_event));
    for (int i = 0; i < n_pending; i++) {
        struct pending *p = &pending[i];
        cl_ulong start = 0, end = 0;
        if (real_clWaitForEvents(1, &p->event) != CL_SUCCESS ||
            real_clGetEventProfilingInfo(p->event, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                         NULL) != CL_SUCCESS ||
            real_clGetEventProfilingInfo(p->event, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                         NULL) != CL_SUCCESS ||
            end < start) {
            unprofiled++;
        } else if (p->kind == KERNEL) {
            kernel_ns += end - start;
            if (p->name >= 0) name_ns[p->name] += end - start;
        } else {
            transfer_ns += end - start;
        }
        real_clReleaseEvent(p->event);
    }
    n_pending = 0;
    write_totals();
}

static void at_exit(void) {
    pthread_mutex_lock(&lock);
    harvest();
    pthread_mutex_unlock(&lock);
}

static void register_exit(void) {
    /* Registered at the first queue, after the driver set itself up, so
       that this runs before the driver's own exit handlers. */
    if (!exit_registered) {
        exit_registered = 1;
        atexit(at_exit);
    }
}

/* The index of a kernel's name in names[], adding it; -1 when full. */
static int name_of(cl_kernel kernel) {
    REAL(cl_int, clGetKernelInfo, (cl_kernel, cl_kernel_info, size_t, void *, size_t *));
    char name[64] = "?";
    if (real_clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL) !=
        CL_SUCCESS)
        strcpy(name, "?");
    name[sizeof name - 1] = 0;
    for (char *c = name; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '_';
    for (int i = 0; i < n_names; i++)
        if (!strcmp(names[i], name)) return i;
    if (n_names == MAX_NAMES) return -1;
    strcpy(names[n_names], name);
    return n_names++;
}

/* Records the event of a command just enqueued: `ours` when the caller
   passed no event pointer, else the caller's (which gets a reference of
   ours, so that the caller may release it). */
static void track(cl_int err, cl_event ours, cl_event *callers, enum kind kind, int name,
                  size_t bytes) {
    REAL(cl_int, clRetainEvent, (cl_event));
    if (err != CL_SUCCESS) return;
    pthread_mutex_lock(&lock);
    cl_event e = callers ? *callers : ours;
    if (callers) real_clRetainEvent(e);
    if (n_pending == MAX_PENDING) harvest();
    pending[n_pending].event = e;
    pending[n_pending].kind = kind;
    pending[n_pending].name = name;
    n_pending++;
    if (kind == KERNEL) {
        launches++;
        if (name >= 0) name_launches[name]++;
    } else {
        transfers++;
        transfer_bytes += bytes;
    }
    pthread_mutex_unlock(&lock);
}

CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context context,
                                                               cl_device_id device,
                                                               cl_command_queue_properties props,
                                                               cl_int *err) {
    REAL(cl_command_queue, clCreateCommandQueue,
         (cl_context, cl_device_id, cl_command_queue_properties, cl_int *));
    register_exit();
    return real_clCreateCommandQueue(context, device, props | CL_QUEUE_PROFILING_ENABLE, err);
}

CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(
    cl_context context, cl_device_id device, const cl_queue_properties *props, cl_int *err) {
    REAL(cl_command_queue, clCreateCommandQueueWithProperties,
         (cl_context, cl_device_id, const cl_queue_properties *, cl_int *));
    register_exit();
    cl_queue_properties mine[64];
    int n = 0, found = 0;
    for (const cl_queue_properties *p = props; p && p[0] && n < 60; p += 2) {
        mine[n] = p[0];
        mine[n + 1] = p[1];
        if (p[0] == CL_QUEUE_PROPERTIES) {
            mine[n + 1] |= CL_QUEUE_PROFILING_ENABLE;
            found = 1;
        }
        n += 2;
    }
    if (!found) {
        mine[n++] = CL_QUEUE_PROPERTIES;
        mine[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    mine[n] = 0;
    return real_clCreateCommandQueueWithProperties(context, device, mine, err);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel,
                                                       cl_uint dims, const size_t *offset,
                                                       const size_t *global, const size_t *local,
                                                       cl_uint n_wait, const cl_event *wait,
                                                       cl_event *event) {
    REAL(cl_int, clEnqueueNDRangeKernel,
         (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,
          cl_uint, const cl_event *, cl_event *));
    cl_event ours = NULL;
    int name;
    pthread_mutex_lock(&lock);
    name = name_of(kernel);
    pthread_mutex_unlock(&lock);
    cl_int err = real_clEnqueueNDRangeKernel(queue, kernel, dims, offset, global, local, n_wait,
                                             wait, event ? event : &ours);
    track(err, ours, event, KERNEL, name, 0);
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer,
                                                    cl_bool blocking, size_t offset, size_t size,
                                                    void *ptr, cl_uint n_wait,
                                                    const cl_event *wait, cl_event *event) {
    REAL(cl_int, clEnqueueReadBuffer,
         (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *,
          cl_event *));
    cl_event ours = NULL;
    cl_int err = real_clEnqueueReadBuffer(queue, buffer, blocking, offset, size, ptr, n_wait, wait,
                                          event ? event : &ours);
    track(err, ours, event, TRANSFER, -1, size);
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer,
                                                     cl_bool blocking, size_t offset, size_t size,
                                                     const void *ptr, cl_uint n_wait,
                                                     const cl_event *wait, cl_event *event) {
    REAL(cl_int, clEnqueueWriteBuffer,
         (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
          const cl_event *, cl_event *));
    cl_event ours = NULL;
    cl_int err = real_clEnqueueWriteBuffer(queue, buffer, blocking, offset, size, ptr, n_wait,
                                           wait, event ? event : &ours);
    track(err, ours, event, TRANSFER, -1, size);
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue queue, cl_mem src, cl_mem dst,
                                                    size_t src_offset, size_t dst_offset,
                                                    size_t size, cl_uint n_wait,
                                                    const cl_event *wait, cl_event *event) {
    REAL(cl_int, clEnqueueCopyBuffer,
         (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *,
          cl_event *));
    cl_event ours = NULL;
    cl_int err = real_clEnqueueCopyBuffer(queue, src, dst, src_offset, dst_offset, size, n_wait,
                                          wait, event ? event : &ours);
    track(err, ours, event, TRANSFER, -1, size);
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue queue) {
    REAL(cl_int, clReleaseCommandQueue, (cl_command_queue));
    pthread_mutex_lock(&lock);
    harvest();
    pthread_mutex_unlock(&lock);
    return real_clReleaseCommandQueue(queue);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseContext(cl_context context) {
    REAL(cl_int, clReleaseContext, (cl_context));
    pthread_mutex_lock(&lock);
    harvest();
    pthread_mutex_unlock(&lock);
    return real_clReleaseContext(context);
}
