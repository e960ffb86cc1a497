"""Shared by table.py and ab_table.py: print a table, or put it into a
README between `<!-- NAME:begin -->` and `<!-- NAME:end -->`."""


def put_into_readme(readme, name, text):
    """Replaces what stands between `<!-- NAME:begin -->` and
    `<!-- NAME:end -->` in the file `readme` with `text`."""
    with open(readme, encoding="utf-8") as f:
        content = f.read()
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    if begin not in content or end not in content:
        raise SystemExit("%s has no %s ... %s section" % (readme, begin, end))
    head, rest = content.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(readme, "w", encoding="utf-8") as f:
        f.write(head + begin + "\n" + text + "\n" + end + tail)


def main(argv, name, table):
    """argv: FILE... or --readme README FILE...; table(paths) -> text."""
    if argv and argv[0] == "--readme":
        put_into_readme(argv[1], name, table(argv[2:]))
    else:
        print(table(argv))
