#include "CShareV4L2.h"
#include <sys/ioctl.h>

int CShareV4L2_querycap(int fd, struct v4l2_capability *cap) { return ioctl(fd, VIDIOC_QUERYCAP, cap); }
int CShareV4L2_enum_fmt(int fd, struct v4l2_fmtdesc *desc) { return ioctl(fd, VIDIOC_ENUM_FMT, desc); }
int CShareV4L2_enum_framesizes(int fd, struct v4l2_frmsizeenum *size) { return ioctl(fd, VIDIOC_ENUM_FRAMESIZES, size); }
int CShareV4L2_enum_frameintervals(int fd, struct v4l2_frmivalenum *interval) { return ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, interval); }
int CShareV4L2_s_fmt(int fd, struct v4l2_format *format) { return ioctl(fd, VIDIOC_S_FMT, format); }
int CShareV4L2_s_parm(int fd, struct v4l2_streamparm *parm) { return ioctl(fd, VIDIOC_S_PARM, parm); }
int CShareV4L2_reqbufs(int fd, struct v4l2_requestbuffers *req) { return ioctl(fd, VIDIOC_REQBUFS, req); }
int CShareV4L2_querybuf(int fd, struct v4l2_buffer *buf) { return ioctl(fd, VIDIOC_QUERYBUF, buf); }
int CShareV4L2_qbuf(int fd, struct v4l2_buffer *buf) { return ioctl(fd, VIDIOC_QBUF, buf); }
int CShareV4L2_dqbuf(int fd, struct v4l2_buffer *buf) { return ioctl(fd, VIDIOC_DQBUF, buf); }
int CShareV4L2_streamon(int fd, int type) { return ioctl(fd, VIDIOC_STREAMON, &type); }
int CShareV4L2_streamoff(int fd, int type) { return ioctl(fd, VIDIOC_STREAMOFF, &type); }
