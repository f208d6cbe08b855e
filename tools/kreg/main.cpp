// kreg: the command-line tool.
#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

namespace {

void add_common(CLI::App* command, kreg::cli::CommonOptions& common, bool with_arch = true) {
  if (with_arch)
    command->add_option("--arch", common.arch, "Compile target, e.g. sm_90 (default: the GPU's)");
  command->add_option("--cache-dir", common.cache_dir,
                      "Disk cache folder (default: KREG_CACHE_DIR or ~/.cache/kreg)");
  command->add_flag("--json", common.json, "Print JSON");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kreg: a runtime registry of CUDA kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kreg::version()));

  kreg::cli::SelfCheckOptions check;
  CLI::App* selfcheck = app.add_subcommand(
      "selfcheck",
      "Compile and prewarm every built-in kernel, then run each on the GPU if there is one");
  add_common(selfcheck, check.common);
  selfcheck->add_option("-j,--jobs", check.jobs, "Prewarm threads (default: one per core)");

  kreg::cli::CommonOptions doctor_options;
  CLI::App* doctor = app.add_subcommand("doctor", "Driver, device, NVRTC, cache folder and usage");
  add_common(doctor, doctor_options);

  CLI::App* list =
      app.add_subcommand("list", "Sources, their entries, constants and specializations");
  bool list_json = false;
  list->add_flag("--json", list_json, "Print JSON");

  kreg::cli::PrewarmOptions prewarm_options;
  CLI::App* prewarm = app.add_subcommand("prewarm", "Compile (and load) kernels into the caches");
  add_common(prewarm, prewarm_options.common);
  prewarm->add_flag("--all", prewarm_options.all, "Every built-in kernel");
  prewarm->add_option("names", prewarm_options.names, "Kernels, as name or name|200:b1|300:i4");
  prewarm->add_option("--manifest", prewarm_options.manifest,
                      "A manifest written by Registry::write_manifest");
  prewarm->add_option("-j,--jobs", prewarm_options.jobs, "Prewarm threads (default: one per core)");

  kreg::cli::CacheOptions cache_options;
  CLI::App* cache = app.add_subcommand(
      "cache", "Inspect and maintain the disk cache, its bundles and the remote cache");
  add_common(cache, cache_options.common);
  cache
      ->add_option(
          "action", cache_options.words,
          "stats, clear, trim, verify, tuning; export --out FILE [--manifest M]; import FILE; "
          "remote stats | ping | push [--all | --manifest M] | pull --manifest M")
      ->required();
  cache->add_option("--target-bytes", cache_options.target_bytes,
                    "trim: size to trim to, e.g. 512M (default: the bound)");
  cache->add_flag("--remove-bad", cache_options.remove_bad, "verify: delete bad entries");
  cache->add_option("--out", cache_options.out, "export: the bundle file to write");
  cache->add_option("--manifest", cache_options.manifest,
                    "export, remote push, remote pull: only the kernels this manifest lists "
                    "(their keys need the target: --arch, or the GPU's)");
  cache->add_flag("--all", cache_options.all, "remote push: every entry of the disk cache");
  cache->add_flag("--count-keys", cache_options.count_keys,
                  "remote stats: count the keys under the prefix (a SCAN of the database)");
  cache->add_option("--remote", cache_options.remote,
                    "The remote cache, redis://host:port[/db] or unix:///path "
                    "(default: KREG_REMOTE_CACHE)");

  kreg::cli::BuildCacheOptions build_options;
  CLI::App* build = app.add_subcommand(
      "build-cache", "Fill a cache folder for a target arch (no GPU needed), to ship to machines");
  add_common(build, build_options.common);
  build->get_option("--arch")->required();
  build->add_option("--out", build_options.out, "The cache folder to fill");
  build->add_option("--bundle", build_options.bundle,
                    "Also write the cache as a bundle (kreg cache import takes it); without "
                    "--out, the folder is a temporary one");
  build->add_option("--manifest", build_options.manifest, "Also build what this manifest lists");
  build->add_option("-j,--jobs", build_options.jobs, "Threads (default: one per core)");

  kreg::cli::TuneCommandOptions tune_options;
  CLI::App* tune = app.add_subcommand(
      "tune",
      "Time the built-in ops' launch choices for the shapes a file lists (needs a GPU), "
      "and keep the winners in the caches");
  tune->add_option("file", tune_options.file,
                   "A JSON array of shapes, e.g. "
                   "[{\"op\": \"matmul\", \"m\": 16, \"n\": 4096, "
                   "\"k\": 4096}]")
      ->required();
  tune->add_option("--warmup", tune_options.warmup, "Launches before the timed ones (default 3)")
      ->check(CLI::NonNegativeNumber);
  tune->add_option("--repeats", tune_options.repeats,
                   "Timed launches a candidate, whose median counts (default 20)")
      ->check(CLI::PositiveNumber);
  tune->add_flag("--json", tune_options.json, "Print JSON");

  // CLI11 would call an unknown word a missing subcommand.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    std::string known;
    bool found = false;
    for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
      found = found || command->get_name() == word;
      known += (known.empty() ? "" : ", ") + command->get_name();
    }
    if (!found) {
      std::cerr << "kreg: unknown command '" << word << "' (commands: " << known
                << "; see kreg --help)\n";
      return 2;
    }
  }
  CLI11_PARSE(app, argc, argv);
  try {
    if (*selfcheck) return kreg::cli::selfcheck(check);
    if (*doctor) return kreg::cli::doctor(doctor_options);
    if (*prewarm) return kreg::cli::prewarm(prewarm_options);
    if (*cache) return kreg::cli::cache(cache_options);
    if (*build) return kreg::cli::build_cache(build_options);
    if (*list) return kreg::cli::list(list_json);
    if (*tune) return kreg::cli::tune(tune_options);
  } catch (const kreg::Error& e) {
    // The line names kreg and the code once each; the message carries neither.
    std::cerr << "kreg: " << kreg::to_string(e.code()) << ": " << e.message() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "kreg: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
