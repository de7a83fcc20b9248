#!/usr/bin/env python3
"""Check that the translations are current (issue 9).

1. Every file in po/POTFILES exists, and every file under app/ and data/ that has
   translatable strings (_(), N_(), C_(), ngettext(), translatable="yes", GSettings
   summaries, desktop/metainfo templates) is listed in po/POTFILES.
2. No unmarked user-visible strings in the .ui files: every label, title, subtitle,
   description, tooltip, placeholder (properties, menu attributes, accessible labels)
   with text has translatable="yes".
3. The template extracted now from POTFILES (xgettext, as `ninja hanzo-desktop-pot` does)
   is fully translated by every language in po/LINGUAS: no message missing, none fuzzy.

Usage: check-translations.py SOURCE_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

src = sys.argv[1]
errors = []

potfiles = [line.strip() for line in open(os.path.join(src, 'po', 'POTFILES'), encoding='utf-8')
            if line.strip() and not line.startswith('#')]
for f in potfiles:
    if not os.path.isfile(os.path.join(src, f)):
        errors.append(f'po/POTFILES lists {f}, which does not exist')

MARKS = re.compile(r'\b(?:_|N_|C_|NC_|ngettext|g_dngettext)\s*\(\s*["a-zA-Z]|translatable="yes"|<summary>')
for top in ('app', 'data'):
    for dirpath, _dirs, files in os.walk(os.path.join(src, top)):
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(dirpath, name), src)
            if not name.endswith(('.c', '.h', '.ui', '.xml', '.in')):
                continue
            text = open(os.path.join(src, rel), encoding='utf-8').read()
            needs = name.endswith(('.desktop.in', '.metainfo.xml.in')) or MARKS.search(text)
            if needs and rel not in potfiles:
                errors.append(f'{rel} has translatable strings but is not in po/POTFILES')

VISIBLE = {'label', 'title', 'subtitle', 'description', 'tooltip-text', 'tooltip-markup',
           'placeholder-text', 'text', 'heading', 'body', 'button-label', 'secondary-text'}
for f in potfiles:
    if not f.endswith('.ui'):
        continue
    root = ET.parse(os.path.join(src, f)).getroot()
    for el in root.iter():
        if el.tag not in ('property', 'attribute') or el.get('name') not in VISIBLE:
            continue
        value = (el.text or '').strip()
        if not value or not re.search(r'[A-Za-z]', value):
            continue
        if el.get('translatable') != 'yes':
            errors.append(f'{f}: <{el.tag} name="{el.get("name")}">{value}</{el.tag}> '
                          'is not marked translatable="yes"')

with tempfile.TemporaryDirectory() as tmp:
    pot = os.path.join(tmp, 'current.pot')
    subprocess.run(['xgettext', '--from-code=UTF-8', '--add-comments', '--directory', src,
                    '--files-from', os.path.join(src, 'po', 'POTFILES'), '--output', pot,
                    '--keyword=_', '--keyword=N_', '--keyword=C_:1c,2', '--keyword=NC_:1c,2',
                    '--keyword=g_dngettext:2,3', '--keyword=ngettext:1,2'],
                   check=True)
    linguas = [line.strip() for line in open(os.path.join(src, 'po', 'LINGUAS'), encoding='utf-8')
               if line.strip() and not line.startswith('#')]
    for lang in linguas:
        po = os.path.join(src, 'po', lang + '.po')
        merged = os.path.join(tmp, lang + '.po')
        subprocess.run(['msgmerge', '--quiet', '--no-fuzzy-matching', '--output-file', merged, po, pot],
                       check=True)
        for what, flag in (('untranslated', '--untranslated'), ('fuzzy', '--only-fuzzy')):
            out = subprocess.run(['msgattrib', flag, '--no-obsolete', merged],
                                 check=True, capture_output=True, text=True).stdout
            ids = [m for m in re.findall(r'^msgid "(.*)"$', out, re.M) if m]
            ids += re.findall(r'^msgid ""\n"(.+)"$', out, re.M)
            for msgid in ids:
                errors.append(f'po/{lang}.po: {what}: "{msgid}"')

for e in errors:
    print(e)
print(f'{len(errors)} problem(s) in {len(potfiles)} files of po/POTFILES')
sys.exit(1 if errors else 0)
