/* cuda-sys-gen stand-in: the SAL annotations the D3D headers' includes expect; none used. */
#pragma once
