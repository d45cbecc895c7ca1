import jax, jax.numpy as jnp
x = jnp.arange(1_000_000, dtype=jnp.int32)
f = (x % 1000).astype(jnp.float32)
print("jax", jax.__version__, jax.devices()[0].platform, "int sum", int(jnp.sum(x % 1000)), "float sum", float(jnp.sum(f)), "dot", float(jnp.dot(f, f)))
maps = open("/proc/self/maps").read().splitlines()
print("libcuda mapped:", sorted({l.split()[-1] for l in maps if "libcuda" in l}))
