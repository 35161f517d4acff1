// Thin shims over V4L2: ioctl is variadic and the VIDIOC_* request numbers are macros.
#pragma once
#include <linux/videodev2.h>

int CShareV4L2_querycap(int fd, struct v4l2_capability *cap);
int CShareV4L2_enum_fmt(int fd, struct v4l2_fmtdesc *desc);
int CShareV4L2_enum_framesizes(int fd, struct v4l2_frmsizeenum *size);
int CShareV4L2_enum_frameintervals(int fd, struct v4l2_frmivalenum *interval);
int CShareV4L2_s_fmt(int fd, struct v4l2_format *format);
int CShareV4L2_s_parm(int fd, struct v4l2_streamparm *parm);
int CShareV4L2_reqbufs(int fd, struct v4l2_requestbuffers *req);
int CShareV4L2_querybuf(int fd, struct v4l2_buffer *buf);
int CShareV4L2_qbuf(int fd, struct v4l2_buffer *buf);
int CShareV4L2_dqbuf(int fd, struct v4l2_buffer *buf);
int CShareV4L2_streamon(int fd, int type);
int CShareV4L2_streamoff(int fd, int type);
