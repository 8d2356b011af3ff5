"""Man pages from the parsers: one a command, every option in it, valid roff."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from toroid_cli import cmd_man, main, manpage

from .test_parsers import run_main

CLI_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MACROS = {".TH", ".SH", ".SS", ".TP", ".PP", ".nf", ".fi", ".br", ".\\\""}


def unescape(roff):
    return roff.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "").replace("\\fB", "") \
        .replace("\\fI", "").replace("\\fR", "")


class PagesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pages = cmd_man.pages("9.8.7")
        cls.parser = main.build_parser("toroid")

    def test_one_page_per_command_and_the_overview(self):
        want = {"toroid.1"} | {"toroid-%s.1" % name for name in main.MODULES}
        self.assertEqual(set(self.pages), want)

    def test_sections_and_header(self):
        for name, text in self.pages.items():
            lines = text.splitlines()
            page = name[:-2]
            self.assertEqual(lines[1], '.TH %s 1 "" "toroid 9.8.7" "Toroid manual"' % page.upper().replace("-", "\\-"),
                             name)
            sections = [line[4:] for line in lines if line.startswith(".SH ")]
            self.assertEqual(sections[:3], ["NAME", "SYNOPSIS", "DESCRIPTION"], name)
            self.assertIn("EXIT STATUS", sections, name)
            self.assertEqual(sections[-1], "SEE ALSO", name)

    def test_every_option_and_its_help_is_in_the_page(self):
        for name in main.MODULES:
            sub = self.parser.subcommands.choices[name]
            text = unescape(self.pages["toroid-%s.1" % name])
            for action in sub._actions:
                if action.help == "==SUPPRESS==":
                    self.assertNotIn(action.option_strings[0] + "\n", text)
                    continue
                for opt in action.option_strings:
                    self.assertIn(opt, text, "%s: %s" % (name, opt))
                if action.help and "%" not in action.help:
                    self.assertIn(action.help, text, "%s: help of %s" % (name, action.dest))

    def test_overview_lists_every_command_with_its_synopsis(self):
        text = unescape(self.pages["toroid.1"])
        for name, forms, summary in main.command_table(self.parser):
            self.assertIn(forms[0], text)
            self.assertIn(summary, text)
            if name != "help":
                self.assertIn("toroid-%s(1)" % name, text)

    def test_no_stray_control_lines(self):
        for name, text in self.pages.items():
            for line in text.splitlines():
                if line.startswith(".") or line.startswith("'"):
                    self.assertIn(line.split(" ")[0], MACROS, "%s: %r" % (name, line))

    def test_escapes(self):
        self.assertEqual(manpage.escape(".x -y \\z\n'q"), "\\&.x \\-y \\ez\n\\&'q")

    @unittest.skipIf(shutil.which("groff") is None, "groff is not installed")
    def test_groff_renders_every_page_without_warnings(self):
        for name, text in self.pages.items():
            r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=text, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertEqual((r.returncode, r.stderr), (0, ""), name)
        r = subprocess.run(["groff", "-man", "-Tascii", "-P", "-cbou"], input=self.pages["toroid-bench.1"], text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        plain = re.sub(r"\s+", " ", r.stdout)
        self.assertIn("--with-link first measure the raw link", plain)
        self.assertIn("toroid bench --micro [--json FILE]", plain)


class ManCommandTest(unittest.TestCase):
    def test_list_and_write(self):
        status, out, _ = run_main(["man", "--list"])
        self.assertEqual(status, 0)
        names = out.split()
        self.assertEqual(names[0], "toroid.1")
        with tempfile.TemporaryDirectory() as d:
            status, out, err = run_main(["man", "--out", d, "--version", "1.2"])
            self.assertEqual((status, err), (0, ""))
            self.assertEqual(sorted(os.listdir(d)), sorted(names))
            with open(os.path.join(d, "toroid-test.1")) as f:
                self.assertIn('"toroid 1.2"', f.read())
            self.assertIn("%d pages written to %s" % (len(names), d), out)

    def test_version_from_meson_build(self):
        with open(os.path.join(os.path.dirname(os.path.dirname(CLI_DIR)), "meson.build")) as f:
            want = re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)
        self.assertEqual(cmd_man.source_version(main.Paths()), want)

    def test_meson_lists_every_module(self):
        # tools/cli/meson.build names the modules so that the build remakes the pages.
        with open(os.path.join(CLI_DIR, "meson.build")) as f:
            listed = set(re.findall(r"'((?:toroid_cli/)?[a-z_]+\.py)'", f.read()))
        present = {"__main__.py"} | {"toroid_cli/" + f for f in os.listdir(os.path.join(CLI_DIR, "toroid_cli"))
                                     if f.endswith(".py")}
        self.assertEqual(listed, present)


if __name__ == "__main__":
    unittest.main()
