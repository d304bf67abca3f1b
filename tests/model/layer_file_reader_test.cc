#include "model/io/layer_file_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/build_paths.h"

namespace hetsched::model::io {
namespace {

constexpr const char* kGood = R"(name: tiny
batch: 16
micro_batch: 2
seq_len: 512
precision: bf16
optimizer: adam
layers:
  - {name: embed, kind: embedding, fwd_flops: 0, param_bytes: 8MiB, activation_bytes: 2KiB,
     output_bytes: 1MiB, tp_allreduces: 2}
  - {name: block, kind: transformer, fwd_flops: 2.5e10, param_bytes: 24MiB,
     activation_bytes: 12MiB, output_bytes: 1MiB, tp_allreduces: 4, repeat: 3}
  - {name: head, kind: head, fwd_flops: 8e9, param_bytes: 8MiB, activation_bytes: 4MiB,
     output_bytes: 0}
)";

TEST(LayerFileReader, ParsesLayersAndRepeats) {
  auto m = ParseLayerFile(kGood, "tiny.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "tiny");
  ASSERT_EQ(m->layers.size(), 5u);
  EXPECT_EQ(m->layers[1].name, "block.0");
  EXPECT_EQ(m->layers[3].name, "block.2");
  EXPECT_EQ(m->layers[1].parameters, 24ull * 1024 * 1024 / 2);  // bf16: 2 bytes each
  EXPECT_DOUBLE_EQ(m->layers[2].fwd_flops, 2.5e10);
  EXPECT_EQ(m->layers[0].kind, LayerKind::kEmbedding);
  EXPECT_EQ(m->layers[4].output_bytes, 0u);
  EXPECT_EQ(m->setup.global_batch, 16);
  EXPECT_EQ(m->setup.micro_batch, 2);
  EXPECT_EQ(m->setup.precision, Precision::kFp16);
}

struct BadCase {
  const char* text;
  const char* expected;  // substring of the message, including file:line:column
};

TEST(LayerFileReader, BadInputNamesFileLineColumn) {
  const BadCase cases[] = {
      {"name: x\nbatch: 0\nseq_len: 4\nlayers: []\n", "m.yaml:2:8: batch: 0 is out of range"},
      {"name: x\nbatch: 4\nseq_len: 4\nlayers: []\n", "m.yaml:4:9: layers: is not a non-empty"},
      {"name: x\nbatch: 4\nseq_len: 4\nlayers:\n  - {name: a, fwd_flops: -1, param_bytes: 2, "
       "activation_bytes: 1, output_bytes: 1}\n",
       "m.yaml:5:26: layers[0].fwd_flops: -1 is out of range"},
      {"name: x\nbatch: 4\nseq_len: 4\nlayers:\n  - {name: a, fwd_flops: 1, param_bytes: 2, "
       "activation_bytes: 1}\n",
       "m.yaml:5:5: layers[0].output_bytes: missing required field"},
      {"name: x\nbatch: 4\nseq_len: 4\nlayers:\n  - {name: a, fwd_flops: 1, param_bytes: 3, "
       "activation_bytes: 1, output_bytes: 1}\n",
       "layers[0].param_bytes: 3 bytes is not a whole number of 2-byte"},
      {"name: x\nbatch: 4\nseq_len: 4\nlayers:\n  - {name: a, fwd_flops: 1, param_bytes: 2, "
       "activation_bytes: lots, output_bytes: 1}\n",
       "m.yaml:5:63: layers[0].activation_bytes: 'lots' is not a byte count"},
      {"name: x\nbatch: 4\nseq_len: 4\nlayer: []\n", "m.yaml:4:1: layer: unknown field"},
      {"name: x\nbatch: 4\nseq_len: 4\nlayers:\n  - {name: a, fwd_flops: 1, param_bytes: 2, "
       "activation_bytes: 1, output_bytes: 1, repeat: 1000000}\n",
       "layers[0].repeat: 1000000 is out of range"},
      {"name: x\nbatch: 4\nmicro_batch: 3\nseq_len: 4\nlayers: []\n",
       "m.yaml:3:14: micro_batch: 3 does not divide the batch 4"},
      {"name: [x\n", "m.yaml:"},
      {"", "m.yaml: (document): is empty"},
      {"name: x\nbatch: 4\nseq_len: 4\noptimizer: lion\nlayers: []\n",
       "m.yaml:4:12: optimizer: 'lion' is not known"},
  };
  for (const BadCase& c : cases) {
    auto m = ParseLayerFile(c.text, "m.yaml");
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_EQ(m.status().code(), util::StatusCode::kInvalidArgument);
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos)
        << "got: " << m.status().message() << "\nwanted: " << c.expected;
  }
}

TEST(LayerFileReader, ShippedExampleParses) {
  auto m = LoadLayerFile(std::string(HETSCHED_SOURCE_DIR) + "/examples/models/gpt-1.3b.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_GT(m->layers.size(), 10u);
}

TEST(LayerFileReader, MissingFileIsNotFound) {
  auto m = LoadLayerFile("/nonexistent/model.yaml");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), util::StatusCode::kNotFound);
}

}  // namespace
}  // namespace hetsched::model::io
