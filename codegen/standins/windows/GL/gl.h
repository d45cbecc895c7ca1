/* cuda-sys-gen stand-in for the Windows SDK's GL/gl.h: the GL types cudaGL.h names. */
#pragma once
typedef unsigned int GLenum;
typedef unsigned int GLuint;
