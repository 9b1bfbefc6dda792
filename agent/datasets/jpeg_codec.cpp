#include "agent/datasets/jpeg_codec.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// jpeglib.h needs size_t and FILE declared first.
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <jpeglib.h>
// jerror.h after jpeglib.h: the JWRN_* message codes.
#include <jerror.h>

namespace jetsweep::agent {

namespace {

// libjpeg reports fatal errors through error_exit, which must not return: jump back with the message.
struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool premature_eof;
};

void on_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void on_output_message(j_common_ptr) {}  // warnings are not printed

// Records a premature end of the data (libjpeg pads the image with grey and only warns).
void on_emit_message(j_common_ptr cinfo, int level) {
  if (level < 0) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) err->premature_eof = true;
    cinfo->err->num_warnings++;
  }
}

}  // namespace

namespace {

// The libjpeg calls, in a frame whose only locals are the libjpeg structs (accessed through pointers), so
// nothing with a destructor or a cached register value is live across the longjmp. Returns false with
// `message` set on a fatal error.
bool decode_raw(const uint8_t* data, size_t size, RgbImage* out, std::string* message, bool* truncated) {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  cinfo.err = jpeg_std_error(&err.base);
  err.base.error_exit = on_error_exit;
  err.base.output_message = on_output_message;
  err.base.emit_message = on_emit_message;
  err.premature_eof = false;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    *message = err.message;
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, const_cast<unsigned char*>(data), static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&cinfo);
    *message = "CMYK JPEGs are not supported";
    return false;
  }
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out->width = cinfo.output_width;
  out->height = cinfo.output_height;
  out->pixels.resize(static_cast<size_t>(out->width * out->height * 3));
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out->pixels.data() + static_cast<size_t>(cinfo.output_scanline) * static_cast<size_t>(out->width) * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  // A truncated stream decodes as grey padding with a warning; it is reported as corrupt (as PIL does).
  *truncated = err.premature_eof;
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

bool encode_raw(const RgbImage& image, int quality, unsigned char** buffer, unsigned long* buffer_size,
                std::string* message) {
  jpeg_compress_struct cinfo;
  ErrorManager err;
  cinfo.err = jpeg_std_error(&err.base);
  err.base.error_exit = on_error_exit;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    *message = err.message;
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, buffer, buffer_size);
  cinfo.image_width = static_cast<JDIMENSION>(image.width);
  cinfo.image_height = static_cast<JDIMENSION>(image.height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.pixels.data() + static_cast<size_t>(cinfo.next_scanline) * static_cast<size_t>(image.width) * 3);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

}  // namespace

Result<RgbImage> decode_jpeg(const uint8_t* data, size_t size, const std::string& where) {
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8)
    return invalid_argument(where + ": not a JPEG file (no SOI marker)");
  RgbImage img;
  std::string message;
  bool truncated = false;
  if (!decode_raw(data, size, &img, &message, &truncated)) return invalid_argument(where + ": corrupt JPEG: " + message);
  if (truncated) return invalid_argument(where + ": truncated JPEG (premature end of data)");
  return img;
}

Result<RgbImage> read_jpeg_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return io_error(path + ": fstat failed");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return io_error(path + ": read failed after " + std::to_string(done) + " bytes");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return decode_jpeg(bytes.data(), bytes.size(), path);
}

Result<std::vector<uint8_t>> encode_jpeg(const RgbImage& image, int quality, const std::string& where) {
  if (image.width <= 0 || image.height <= 0 || image.pixels.size() != static_cast<size_t>(image.width * image.height * 3))
    return invalid_argument(where + ": image buffer does not match " + std::to_string(image.width) + "x" + std::to_string(image.height));
  unsigned char* buffer = nullptr;
  unsigned long buffer_size = 0;
  std::string message;
  const bool ok = encode_raw(image, quality, &buffer, &buffer_size, &message);
  std::vector<uint8_t> out;
  if (ok) out.assign(buffer, buffer + buffer_size);
  std::free(buffer);
  if (!ok) return internal_error(where + ": JPEG encoding failed: " + message);
  return out;
}

}  // namespace jetsweep::agent
