package pub

func Test() {}
