"""Shared by table.py and ab_table.py: print a table, or put it into a
README between `<!-- NAME:begin -->` and `<!-- NAME:end -->`."""


def main(argv, name, table):
    """argv: FILE... or --readme README FILE...; table(paths) -> text."""
    if argv and argv[0] == "--readme":
        readme, paths = argv[1], argv[2:]
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
        head, rest = text.split(begin)
        _, tail = rest.split(end)
        with open(readme, "w", encoding="utf-8") as f:
            f.write(head + begin + "\n" + table(paths) + "\n" + end + tail)
    else:
        print(table(argv))
