// The gate's hand on the guest's vivid cameras, built static into the initramfs: it starts in a
// few milliseconds (unlike v4l2-ctl under emulation) and prints CLOCK_MONOTONIC around the act,
// the clock sharectl stamps its steps with.
//   vividpoke disconnect /dev/videoN   set vivid's Disconnect control (the camera dies: POLLERR, ENODEV)
//   vividpoke unbind vivid.N           unplug the platform device (its node goes away)
//   vividpoke bind vivid.N             plug it back
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static double mono(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static int sysfs(const char *file, const char *device) {
  int fd = open(file, O_WRONLY);
  if (fd < 0) return -errno;
  ssize_t n = write(fd, device, strlen(device));
  int e = n < 0 ? -errno : 0;
  close(fd);
  return e;
}

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: vividpoke disconnect|unbind|bind DEVICE\n"); return 2; }
  const char *what = argv[1], *device = argv[2];
  int result;
  double before, after;
  if (!strcmp(what, "disconnect")) {
    int fd = open(device, O_RDWR | O_NONBLOCK);
    if (fd < 0) { printf("vividpoke: open %s: %s\n", device, strerror(errno)); return 1; }
    struct v4l2_queryctrl q = {.id = V4L2_CTRL_FLAG_NEXT_CTRL};
    unsigned id = 0;
    while (ioctl(fd, VIDIOC_QUERYCTRL, &q) == 0) {
      if (!strcmp((char *)q.name, "Disconnect")) { id = q.id; break; }
      q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
    }
    if (!id) { printf("vividpoke: %s has no Disconnect control\n", device); return 1; }
    struct v4l2_control c = {.id = id, .value = 1};
    before = mono();
    result = ioctl(fd, VIDIOC_S_CTRL, &c) ? -errno : 0;
    after = mono();
    close(fd);
  } else if (!strcmp(what, "unbind") || !strcmp(what, "bind")) {
    char file[128];
    snprintf(file, sizeof file, "/sys/bus/platform/drivers/vivid/%s", what);
    before = mono();
    result = sysfs(file, device);
    after = mono();
  } else {
    fprintf(stderr, "vividpoke: unknown act '%s'\n", what);
    return 2;
  }
  printf("vividpoke: %s %s -> %s, mono %.3f to %.3f\n", what, device, result ? strerror(-result) : "ok", before, after);
  return result ? 1 : 0;
}
